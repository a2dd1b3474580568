//! Rule sets: which game-ending rules apply, and how results are scored.
//!
//! A [`RuleSet`] is built from named presets joined with `+`
//! (`"standard+conversion"`), or read from TOML or JSON with the field names of the
//! struct (unknown fields are errors). Every preset changes the standard rules
//! (engine/RULES.md §4–§6, the 1999 rules) in one respect; `standard` itself changes
//! nothing, so `"conversion"` and `"standard+conversion"` are the same rule set.
//! The repetition code is one such respect: `asian` judges repetitions under the
//! Asian Xiangqi Federation's rules, `chinese` (the standard's) under the 1999
//! Chinese rules (engine/RULES.md §5). Three more presets each take the other
//! reading of a point the 1999 text leaves open (`chase-per-target`,
//! `new-mate-threats`, `check-reply-chases`; engine/RULES.md §5.3, §5.4), so that
//! a variants run can measure how often the reading decides a game.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::Color;

/// The rules a game is played and judged under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RuleSet {
    /// The occurrence of one position (pieces and side to move) that triggers
    /// repetition judgement: 3 in the 1999 rules (art. 4.2.3, 23.2), 4 in the
    /// variant of seeds 001/003. At least 2.
    pub repetition_count: u32,
    /// Whether a one-sided perpetual check loses (art. 24.1, 26.1). Off: checks
    /// count as idle moves in repetition judgement.
    pub perpetual_check_loses: bool,
    /// Whether chases and mate threats are judged (art. 25.2, 28.2, 28.3, 29).
    /// Off: they count as idle moves, so only perpetual check decides a repetition.
    pub chase_rule: bool,
    /// Which federation's code defines chases and judges repetitions.
    pub code: Code,
    /// Art. 29.2's novelty of a chase, read per target: a move chases a target
    /// only when no piece threatened it before the move, so a second attacker on
    /// a piece that already hangs chases nothing. Off (standard): a threat is new
    /// per attacker and target (engine/RULES.md §5.3). Chinese and Asian codes;
    /// the Pikafish code always reads newness per target.
    pub chase_per_target: bool,
    /// Art. 28.2 read with art. 29.2: a move is a mate threat only when the mover,
    /// to move in the position before it, had no such mate already. Off
    /// (standard): keeping a mate threat counts (engine/RULES.md §5.4). Chinese
    /// code only, as are mate threats.
    pub new_mate_threats: bool,
    /// Art. 29.2 for a move that answers a check: threats that the check had
    /// made illegal and the answer makes legal again are new. Off (standard):
    /// checks on the board are set aside, so the side in check keeps its
    /// threats and the answer creates none (engine/RULES.md §5.3). Chinese and
    /// Asian codes; under the Chinese code also threats through a check after the
    /// answer. (Under the Pikafish code a cycle with a check is never judged for
    /// chases.)
    pub check_reply_chases: bool,
    /// The natural move limit in moves by each side without a capture (art.
    /// 4.2.4): 60 = 120 plies. 0 turns the limit off.
    pub move_limit: u32,
    /// What having no legal move while not in check means.
    pub stalemate: Stalemate,
    /// The capture-conversion variant (engine/RULES.md §8).
    pub conversion: bool,
    /// Points for a win, a draw and a loss.
    pub scoring: Scoring,
    /// Red's and Black's share of thinking time or nodes.
    pub odds: Odds,
}

/// The code that judges repetitions (engine/RULES.md §5 gives each difference with the
/// article on each side).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Code {
    /// The 1999 rules of the Chinese Xiangqi Association (the standard).
    Chinese,
    /// The Asian Xiangqi Federation's rules (2003 edition): mate threats, one
    /// check one chase, and the general's and soldiers' attacks are allowed; a
    /// perpetual chase must chase the same piece with every move.
    Asian,
    /// The computer rules Pikafish plays by (engine/PIKAFISH_RULES.md): any check
    /// in a cycle that is not a perpetual check draws it; otherwise one same piece
    /// chased anew (per target) with every move loses, with protection by any
    /// legal recapture and no mate threats.
    Pikafish,
}

impl Code {
    /// `chinese`, `asian` or `pikafish`.
    pub fn token(self) -> &'static str {
        match self {
            Code::Chinese => "chinese",
            Code::Asian => "asian",
            Code::Pikafish => "pikafish",
        }
    }
}

/// What a stalemate (困毙: no legal move, not in check) means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stalemate {
    /// The stalemated side loses (art. 4.1, standard).
    Loss,
    /// The game is drawn (variant).
    Draw,
}

/// How game results are scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scoring {
    /// Win 1, draw ½, loss 0 (art. 14.1).
    Standard,
    /// The 2007 reform (贴分): win 3, loss 0, draw 1 for Red and 2 for Black.
    #[serde(rename = "reform-2007")]
    Reform2007,
}

impl Scoring {
    /// The points `color` scores when `winner` won (`None`: a draw).
    pub fn points(self, winner: Option<Color>, color: Color) -> f64 {
        match (self, winner) {
            (Scoring::Standard, None) => 0.5,
            (Scoring::Standard, Some(w)) => f64::from(u8::from(w == color)),
            (Scoring::Reform2007, None) => match color {
                Color::Red => 1.0,
                Color::Black => 2.0,
            },
            (Scoring::Reform2007, Some(w)) => {
                if w == color {
                    3.0
                } else {
                    0.0
                }
            }
        }
    }
}

/// Red:Black ratio of thinking time (or of nodes, in node-limited play).
/// Written `"2:1"` in TOML and JSON. Invariant: both parts are at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Odds {
    pub red: u32,
    pub black: u32,
}

impl Odds {
    /// Equal time.
    pub const EVEN: Odds = Odds { red: 1, black: 1 };
    /// The 2007 reform's 80 : 40 minutes.
    pub const REFORM_2007: Odds = Odds { red: 2, black: 1 };
}

impl fmt::Display for Odds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.red, self.black)
    }
}

impl FromStr for Odds {
    type Err = RuleSetError;

    fn from_str(s: &str) -> Result<Odds, RuleSetError> {
        let bad = || RuleSetError::BadOdds(s.to_string());
        let (r, b) = s.split_once(':').ok_or_else(bad)?;
        let red: u32 = r.trim().parse().map_err(|_| bad())?;
        let black: u32 = b.trim().parse().map_err(|_| bad())?;
        if red == 0 || black == 0 {
            return Err(bad());
        }
        Ok(Odds { red, black })
    }
}

impl TryFrom<String> for Odds {
    type Error = RuleSetError;
    fn try_from(s: String) -> Result<Odds, RuleSetError> {
        s.parse()
    }
}

impl From<Odds> for String {
    fn from(o: Odds) -> String {
        o.to_string()
    }
}

/// Why a rule set could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RuleSetError {
    #[error("unknown rule preset '{0}'; valid presets: {list}", list = PRESETS.join(", "))]
    UnknownPreset(String),
    #[error("bad odds '{0}'; expected 'red:black' with both parts at least 1, e.g. '2:1'")]
    BadOdds(String),
    #[error("repetition count {0} is too small; it must be at least 2")]
    BadRepetitionCount(u32),
    #[error("bad rule set toml: {0}")]
    Toml(String),
    #[error("bad rule set json: {0}")]
    Json(String),
}

/// Every preset name, in canonical order (the order [`RuleSet::name`] writes them).
pub const PRESETS: [&str; 12] = [
    "standard",
    "repetition-4",
    "stalemate-draw",
    "no-chase-rule",
    "chinese",
    "asian",
    "pikafish",
    "chase-per-target",
    "new-mate-threats",
    "check-reply-chases",
    "conversion",
    "reform-2007",
];

/// The most checks by one side that count toward the natural move limit (art.
/// 23.3: "最多只计10着").
pub const COUNTED_CHECKS: u32 = 10;

impl Default for RuleSet {
    fn default() -> RuleSet {
        RuleSet::STANDARD
    }
}

impl RuleSet {
    /// The 1999 rules as engine/RULES.md states them.
    pub const STANDARD: RuleSet = RuleSet {
        repetition_count: 3,
        perpetual_check_loses: true,
        chase_rule: true,
        code: Code::Chinese,
        chase_per_target: false,
        new_mate_threats: false,
        check_reply_chases: false,
        move_limit: 60,
        stalemate: Stalemate::Loss,
        conversion: false,
        scoring: Scoring::Standard,
        odds: Odds::EVEN,
    };

    /// Applies one preset (a name from [`PRESETS`]) on top of `self`.
    pub fn apply(&mut self, preset: &str) -> Result<(), RuleSetError> {
        match preset.trim() {
            "standard" => {}
            "repetition-4" => self.repetition_count = 4,
            "stalemate-draw" => self.stalemate = Stalemate::Draw,
            "no-chase-rule" => self.chase_rule = false,
            "chinese" => self.code = Code::Chinese,
            "asian" => self.code = Code::Asian,
            "pikafish" => self.code = Code::Pikafish,
            "chase-per-target" => self.chase_per_target = true,
            "new-mate-threats" => self.new_mate_threats = true,
            "check-reply-chases" => self.check_reply_chases = true,
            "conversion" => self.conversion = true,
            "reform-2007" => {
                self.scoring = Scoring::Reform2007;
                self.odds = Odds::REFORM_2007;
            }
            other => return Err(RuleSetError::UnknownPreset(other.to_string())),
        }
        Ok(())
    }

    /// The canonical preset string for this rule set (`"standard"`, or `"standard+"`
    /// followed by the presets in [`PRESETS`] order), or `None` when no combination
    /// of presets gives it.
    pub fn name(&self) -> Option<String> {
        let mut parts = vec!["standard"];
        let mut rebuilt = RuleSet::STANDARD;
        for preset in &PRESETS[1..] {
            let mut with = rebuilt;
            with.apply(preset).ok()?;
            if with != rebuilt && self.has_all_of(preset) {
                rebuilt = with;
                parts.push(preset);
            }
        }
        (rebuilt == *self).then(|| parts.join("+"))
    }

    /// Whether `self` already has every change that `preset` makes.
    fn has_all_of(&self, preset: &str) -> bool {
        let mut with = *self;
        with.apply(preset).is_ok() && with == *self
    }

    /// Reads a rule set from TOML; absent fields keep their standard values.
    pub fn from_toml(text: &str) -> Result<RuleSet, RuleSetError> {
        let rules: RuleSet = toml::from_str(text).map_err(|e| RuleSetError::Toml(e.to_string()))?;
        rules.validated()
    }

    /// Reads a rule set from JSON; absent fields keep their standard values.
    pub fn from_json(text: &str) -> Result<RuleSet, RuleSetError> {
        let rules: RuleSet =
            serde_json::from_str(text).map_err(|e| RuleSetError::Json(e.to_string()))?;
        rules.validated()
    }

    /// The rule set as TOML.
    pub fn to_toml(&self) -> String {
        match toml::to_string(self) {
            Ok(s) => s,
            Err(e) => unreachable!("a rule set always serializes: {e}"),
        }
    }

    /// The rule set as JSON.
    pub fn to_json(&self) -> String {
        match serde_json::to_string(self) {
            Ok(s) => s,
            Err(e) => unreachable!("a rule set always serializes: {e}"),
        }
    }

    fn validated(self) -> Result<RuleSet, RuleSetError> {
        if self.repetition_count < 2 {
            return Err(RuleSetError::BadRepetitionCount(self.repetition_count));
        }
        Ok(self)
    }

    /// The natural move limit in plies, or `None` when it is off.
    pub fn move_limit_plies(&self) -> Option<u32> {
        (self.move_limit > 0).then_some(self.move_limit * 2)
    }

    /// Whether the natural move limit draws after `plies` plies without a
    /// capture. `checks` says, oldest first, whether each of the last
    /// `checks.len()` of those plies gave check, the last being the move into the
    /// current position; the plies before them (a start position's clock) count
    /// as plies without a check.
    ///
    /// Art. 23.3 counts at most [`COUNTED_CHECKS`] of the claimant's checks
    /// toward the limit; an engine game has no claimant, so under the Chinese and
    /// Asian codes the side with more checks is taken as the one counted against
    /// (the draw comes only when either side could claim it): two plies back for
    /// each of its checks beyond the tenth. The Pikafish code counts as
    /// Pikafish's `do_move` does (engine/PIKAFISH_RULES.md §6): a ply does not
    /// count when it is its side's eleventh or later check, or when it answers a
    /// check while the other side has given more than ten.
    pub fn move_limit_reached<I>(&self, plies: u32, checks: I) -> bool
    where
        I: IntoIterator<Item = bool>,
        I::IntoIter: ExactSizeIterator,
    {
        let Some(limit) = self.move_limit_plies() else {
            return false;
        };
        // Checks only ever take plies off the count.
        if plies < limit {
            return false;
        }
        let checks = checks.into_iter();
        let earlier = plies.saturating_sub(u32::try_from(checks.len()).unwrap_or(u32::MAX));
        let counted = match self.code {
            Code::Chinese | Code::Asian => {
                let mut given = [0u32; 2];
                for (i, check) in checks.enumerate() {
                    given[i % 2] += u32::from(check);
                }
                let excess = given.map(|c| c.saturating_sub(COUNTED_CHECKS));
                plies.saturating_sub(2 * excess[0].max(excess[1]))
            }
            Code::Pikafish => earlier.saturating_add(pikafish_counted_plies(checks)),
        };
        counted >= limit
    }
}

/// How many of the plies whose checks `checks` gives (oldest first, the first
/// one after a capture or the start) Pikafish counts toward the natural limit:
/// all but a side's checks beyond its tenth and, when the other side has given
/// more than ten, the plies that answer its check (engine/PIKAFISH_RULES.md §6).
fn pikafish_counted_plies(checks: impl Iterator<Item = bool>) -> u32 {
    // Checks given since the first ply, by the side of even and of odd plies.
    let mut given = [0u32; 2];
    let mut counted = 0;
    // Whether the mover is in check: the ply before gave check.
    let mut answering = false;
    for (i, check) in checks.enumerate() {
        let (us, them) = (i % 2, 1 - i % 2);
        given[us] += u32::from(check);
        let uncounted =
            (check && given[us] > COUNTED_CHECKS) || (answering && given[them] > COUNTED_CHECKS);
        counted += u32::from(!uncounted);
        answering = check;
    }
    counted
}

impl FromStr for RuleSet {
    type Err = RuleSetError;

    /// Parses presets joined with `+`, applied in order on top of the standard rules.
    fn from_str(s: &str) -> Result<RuleSet, RuleSetError> {
        let mut rules = RuleSet::STANDARD;
        for preset in s.split('+') {
            rules.apply(preset)?;
        }
        Ok(rules)
    }
}

impl fmt::Display for RuleSet {
    /// One line: the canonical name (or `custom`), then every field.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let onoff = |b: bool| if b { "on" } else { "off" };
        let name = self.name().unwrap_or_else(|| "custom".to_string());
        let limit = match self.move_limit {
            0 => "off".to_string(),
            n => format!("{n} moves"),
        };
        write!(
            f,
            "{name}: repetition {}, perpetual check loses {}, chase rule {}, code {}, \
             chase per target {}, new mate threats {}, check reply chases {}, \
             move limit {limit}, stalemate {}, conversion {}, scoring {}, odds {}",
            self.repetition_count,
            onoff(self.perpetual_check_loses),
            onoff(self.chase_rule),
            self.code.token(),
            onoff(self.chase_per_target),
            onoff(self.new_mate_threats),
            onoff(self.check_reply_chases),
            match self.stalemate {
                Stalemate::Loss => "loses",
                Stalemate::Draw => "draws",
            },
            onoff(self.conversion),
            match self.scoring {
                Scoring::Standard => "1/0.5/0",
                Scoring::Reform2007 => "3/0, draw red 1 black 2",
            },
            self.odds,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_combine() {
        let r: RuleSet = "standard+conversion".parse().unwrap();
        assert!(r.conversion);
        assert_eq!(r.repetition_count, 3);
        assert_eq!(r.name().as_deref(), Some("standard+conversion"));
        let r: RuleSet = "reform-2007+repetition-4+stalemate-draw+no-chase-rule"
            .parse()
            .unwrap();
        assert_eq!(r.repetition_count, 4);
        assert_eq!(r.stalemate, Stalemate::Draw);
        assert!(!r.chase_rule);
        assert_eq!(r.scoring, Scoring::Reform2007);
        assert_eq!(r.odds, Odds { red: 2, black: 1 });
        assert_eq!(
            r.name().as_deref(),
            Some("standard+repetition-4+stalemate-draw+no-chase-rule+reform-2007")
        );
        assert_eq!("standard".parse::<RuleSet>().unwrap(), RuleSet::default());
        assert_eq!(RuleSet::STANDARD.name().as_deref(), Some("standard"));
        let asian: RuleSet = "asian".parse().unwrap();
        assert_eq!(asian.code, Code::Asian);
        assert_eq!(asian.name().as_deref(), Some("standard+asian"));
        assert_eq!(
            "asian+chinese".parse::<RuleSet>().unwrap(),
            RuleSet::STANDARD
        );
        let toml_text = asian.to_toml();
        assert!(toml_text.contains("code = \"asian\""), "{toml_text}");
        assert_eq!(RuleSet::from_toml(&toml_text).unwrap(), asian);
        for p in PRESETS {
            let r: RuleSet = p.parse().unwrap();
            let name = r.name().unwrap();
            assert_eq!(name.parse::<RuleSet>().unwrap(), r);
        }
    }

    #[test]
    fn readings_are_presets_with_standard_defaults() {
        let r: RuleSet = "new-mate-threats+chase-per-target+check-reply-chases"
            .parse()
            .unwrap();
        assert!(r.chase_per_target && r.new_mate_threats && r.check_reply_chases);
        assert_eq!(
            r.name().as_deref(),
            Some("standard+chase-per-target+new-mate-threats+check-reply-chases")
        );
        let s = RuleSet::STANDARD;
        assert!(!s.chase_per_target && !s.new_mate_threats && !s.check_reply_chases);
        let partial = RuleSet::from_toml("chase_per_target = true").unwrap();
        assert_eq!(partial, "chase-per-target".parse::<RuleSet>().unwrap());
        assert_eq!(RuleSet::from_json(&r.to_json()).unwrap(), r);
    }

    #[test]
    fn unknown_preset_lists_valid_ones() {
        let e = "standard+fast".parse::<RuleSet>().unwrap_err();
        assert_eq!(e, RuleSetError::UnknownPreset("fast".into()));
        let msg = e.to_string();
        for p in PRESETS {
            assert!(msg.contains(p), "{msg}");
        }
    }

    #[test]
    fn custom_rule_sets_have_no_name() {
        let r = RuleSet {
            move_limit: 50,
            ..RuleSet::STANDARD
        };
        assert_eq!(r.name(), None);
        assert!(r.to_string().starts_with("custom: "));
        let r = RuleSet {
            odds: Odds { red: 3, black: 1 },
            scoring: Scoring::Reform2007,
            ..RuleSet::STANDARD
        };
        assert_eq!(r.name(), None);
    }

    #[test]
    fn toml_and_json_round_trip() {
        let r: RuleSet = "reform-2007+conversion".parse().unwrap();
        let toml_text = r.to_toml();
        assert!(toml_text.contains("odds = \"2:1\""), "{toml_text}");
        assert!(
            toml_text.contains("scoring = \"reform-2007\""),
            "{toml_text}"
        );
        assert_eq!(RuleSet::from_toml(&toml_text).unwrap(), r);
        assert_eq!(RuleSet::from_json(&r.to_json()).unwrap(), r);
        let partial = RuleSet::from_toml("repetition_count = 4\nstalemate = \"draw\"").unwrap();
        assert_eq!(
            partial,
            "repetition-4+stalemate-draw".parse::<RuleSet>().unwrap()
        );
    }

    #[test]
    fn unknown_fields_are_errors() {
        let e = RuleSet::from_toml("repetitions = 4")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("repetitions") && e.contains("repetition_count"),
            "{e}"
        );
        let e = RuleSet::from_json(r#"{"chase": false}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("chase") && e.contains("chase_rule"), "{e}");
        assert!(RuleSet::from_toml("odds = \"2:0\"").is_err());
        assert!(RuleSet::from_toml("repetition_count = 1").is_err());
    }

    /// Check flags of `plies` plies: the side of the first ply checks on the
    /// plies of `first`, the other side on those of `second` (0-based).
    fn checks(plies: usize, first: &[usize], second: &[usize]) -> Vec<bool> {
        (0..plies)
            .map(|i| {
                let mine = if i % 2 == 0 { first } else { second };
                mine.contains(&i)
            })
            .collect()
    }

    #[test]
    fn move_limit_counts_ten_checks_of_a_side() {
        let r = RuleSet::STANDARD;
        let evens = |n: usize| (0..n).map(|k| 2 * k).collect::<Vec<_>>();
        let odds = |n: usize| (0..n).map(|k| 2 * k + 1).collect::<Vec<_>>();
        assert!(!r.move_limit_reached(119, checks(119, &[], &[])));
        assert!(r.move_limit_reached(120, checks(120, &evens(10), &odds(10))));
        assert!(!r.move_limit_reached(120, checks(120, &evens(11), &odds(3))));
        assert!(r.move_limit_reached(122, checks(122, &evens(3), &odds(11))));
        assert!(r.move_limit_reached(122, checks(122, &evens(11), &odds(11))));
        assert!(!r.move_limit_reached(129, checks(129, &evens(15), &[])));
        assert!(r.move_limit_reached(130, checks(130, &evens(15), &[])));
        // Plies before the known ones (a start position's clock) have no checks.
        assert!(r.move_limit_reached(120, checks(20, &evens(10), &[])));
        let off = RuleSet {
            move_limit: 0,
            ..RuleSet::STANDARD
        };
        assert!(!off.move_limit_reached(1000, checks(0, &[], &[])));
    }

    #[test]
    fn pikafish_counts_the_plies_its_do_move_counts() {
        // An eleventh check and its answer do not count.
        let plies = |first: &[usize], second: &[usize], n: usize| {
            pikafish_counted_plies(checks(n, first, second).into_iter())
        };
        let evens = |n: usize| (0..n).map(|k| 2 * k).collect::<Vec<_>>();
        assert_eq!(plies(&evens(11), &[], 22), 20);
        // ... but the answer does count while the checking side has given ten.
        assert_eq!(plies(&evens(10), &[], 20), 20);
        // The ply of an eleventh check, before its answer: one ply off.
        assert_eq!(plies(&evens(11), &[], 21), 20);
        // Both sides past ten, each check answering a check: the three checks
        // past ten are off, and only the quiet answer to the last one besides:
        // four plies, not two for each check past ten (six).
        let red = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22];
        let black = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21];
        assert_eq!(plies(&red, &black, 24), 24 - 4);
        let pikafish: RuleSet = "pikafish".parse().unwrap();
        assert!(pikafish.move_limit_reached(124, checks(24, &red, &black)));
        assert!(!pikafish.move_limit_reached(123, checks(24, &red, &black)));
    }

    #[test]
    fn scoring_points() {
        let s = Scoring::Reform2007;
        assert_eq!(s.points(None, Color::Red), 1.0);
        assert_eq!(s.points(None, Color::Black), 2.0);
        assert_eq!(s.points(Some(Color::Black), Color::Black), 3.0);
        assert_eq!(Scoring::Standard.points(None, Color::Black), 0.5);
        assert_eq!(
            Scoring::Standard.points(Some(Color::Red), Color::Black),
            0.0
        );
    }

    #[test]
    fn display_names_the_preset() {
        let r: RuleSet = "conversion".parse().unwrap();
        let s = r.to_string();
        assert!(s.starts_with("standard+conversion: "), "{s}");
        assert!(s.contains("conversion on"), "{s}");
    }
}
