//! Rule sets at the edges. Inside, a rule set is an
//! [`xq_engine::rules::RuleSet`]; it is text (presets joined with `+`,
//! `standard+conversion`) only on the wire, in the store's JSON and on the
//! command line, and is parsed once where it enters ([`parse`]) and written
//! as its canonical name where it leaves ([`name`], and the serde adapters
//! [`preset`] and [`presets`]).

use xq_engine::rules::{PRESETS, RuleSet, RuleSetError};

use crate::error::{Invalid, quote};

/// The rule set the preset text `text` of field `field` names; a refusal
/// names the field and quotes the bad preset short.
pub fn parse(field: &str, text: &str) -> Result<RuleSet, Invalid> {
    text.parse()
        .map_err(|e| Invalid::new(field, refusal(text, &e)))
}

/// Why `text` is no rule set, quoting it (and the preset at fault) short.
pub fn refusal(text: &str, e: &RuleSetError) -> String {
    match e {
        RuleSetError::UnknownPreset(p) => format!(
            "{}: unknown rule preset {}; valid presets: {}",
            quote(text),
            quote(p),
            PRESETS.join(", ")
        ),
        other => format!("{}: {other}", quote(text)),
    }
}

/// The text of `rules` where it leaves: its canonical preset name
/// ([`RuleSet::name`]). A rule set that no presets give cannot be parsed
/// here, so none travels inside; such a one is written `custom`, which no
/// parse accepts.
pub fn name(rules: &RuleSet) -> String {
    rules.name().unwrap_or_else(|| "custom".to_owned())
}

/// Serde adapter (`#[serde(with = "xq_proto::rule_set::preset")]`): a rule
/// set as its canonical preset name, read back from any preset text.
pub mod preset {
    use serde::{Deserialize, Deserializer, Serializer, de, ser};
    use xq_engine::rules::RuleSet;

    pub fn serialize<S: Serializer>(rules: &RuleSet, s: S) -> Result<S::Ok, S::Error> {
        let name = rules
            .name()
            .ok_or_else(|| ser::Error::custom("a rule set that no presets give"))?;
        s.serialize_str(&name)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RuleSet, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map_err(|e| de::Error::custom(format!("rules {}", super::refusal(&text, &e))))
    }
}

/// Serde adapter of a list of rule sets, each as in [`preset`].
pub mod presets {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use xq_engine::rules::RuleSet;

    #[derive(Serialize, Deserialize)]
    #[serde(transparent)]
    struct One(#[serde(with = "super::preset")] RuleSet);

    pub fn serialize<S: Serializer>(rules: &[RuleSet], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(rules.iter().map(|&r| One(r)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RuleSet>, D::Error> {
        Ok(Vec::<One>::deserialize(d)?
            .into_iter()
            .map(|One(r)| r)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Spec {
        #[serde(with = "preset")]
        rules: RuleSet,
        #[serde(with = "presets")]
        variants: Vec<RuleSet>,
    }

    #[test]
    fn every_combination_of_presets_has_a_name_that_parses_back() {
        for mask in 0u32..1 << PRESETS.len() {
            let text: Vec<&str> = PRESETS
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, p)| *p)
                .collect();
            let rules: RuleSet = text.join("+").parse().unwrap_or(RuleSet::STANDARD);
            assert_eq!(parse("rules", &name(&rules)), Ok(rules), "{text:?}");
        }
    }

    #[test]
    fn stored_text_reads_back_and_is_written_by_its_canonical_name() {
        let json = r#"{"rules":"conversion","variants":["standard","asian+repetition-4"]}"#;
        let spec: Spec = serde_json::from_str(json).unwrap();
        assert!(spec.rules.conversion);
        assert_eq!(spec.variants[1].repetition_count, 4);
        assert_eq!(
            serde_json::to_string(&spec).unwrap(),
            r#"{"rules":"standard+conversion","variants":["standard","standard+repetition-4+asian"]}"#
        );
    }

    #[test]
    fn a_bad_preset_names_the_field_and_is_quoted_short() {
        let long = format!("standard+{}", "x".repeat(10_000));
        let e = parse("settings.rules", &long).unwrap_err();
        assert_eq!(e.field, "settings.rules");
        assert!(e.reason.contains("(10009 bytes)"), "{}", e.reason);
        // The quotes are short; the rest is the list of valid presets.
        let list = PRESETS.join(", ").len();
        assert!(e.reason.len() < 150 + list, "{}", e.reason.len());
        let e = parse("work.rules", "").unwrap_err();
        assert!(
            e.reason.contains("unknown rule preset \"\""),
            "{}",
            e.reason
        );
        let bad = serde_json::from_str::<Spec>(r#"{"rules":"chess","variants":[]}"#)
            .unwrap_err()
            .to_string();
        assert!(bad.contains("rules \"chess\""), "{bad}");
    }
}
