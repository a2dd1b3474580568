//! Which `UCI_Variant` an external engine is asked for, decided once for both
//! sides: the coordinator refuses a run at creation from the registry's list,
//! the worker at the handshake from the engine's own.

use xq_engine::rules::RuleSet;

/// The `UCI_Variant` value for `rules`, or why an engine offering `offered`
/// (`None`: no `UCI_Variant` option) cannot play them. An engine that offers the
/// rule set's own name (as `xq-engine` does) is told it; one that offers
/// `xiangqi`, or offers no variants, plays standard Xiangqi, which serves every
/// rule set with the standard moves: all but capture conversion, which changes
/// what pieces are.
pub fn choose_variant(
    offered: Option<&[String]>,
    rules: &RuleSet,
) -> Result<Option<String>, String> {
    let name = rules.name();
    if let (Some(vars), Some(name)) = (offered, &name)
        && name.split('+').all(|part| vars.iter().any(|x| x == part))
    {
        return Ok(Some(name.clone()));
    }
    if rules.conversion {
        return Err(match offered {
            Some(vars) => format!(
                "capture conversion changes the pieces, and its UCI_Variant offers no such \
                 variant (it offers {})",
                vars.join(", ")
            ),
            None => "capture conversion changes the pieces, and the engine offers no \
                     UCI_Variant to ask for it"
                .to_string(),
        });
    }
    match offered {
        Some(vars) if vars.iter().any(|x| x == "xiangqi") => Ok(Some("xiangqi".to_string())),
        Some(vars) => Err(format!(
            "its UCI_Variant offers no xiangqi (it offers {})",
            vars.join(", ")
        )),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offers(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_engine_offering_the_rule_sets_own_name_is_told_it() {
        let rules: RuleSet = "standard+conversion".parse().unwrap();
        let own = offers(&["standard", "conversion", "xiangqi"]);
        assert_eq!(
            choose_variant(Some(&own), &rules).unwrap().as_deref(),
            Some("standard+conversion")
        );
    }

    #[test]
    fn xiangqi_serves_every_rule_set_but_capture_conversion() {
        let fairy = offers(&["chess", "xiangqi", "janggi"]);
        let asian: RuleSet = "asian".parse().unwrap();
        assert_eq!(
            choose_variant(Some(&fairy), &asian).unwrap().as_deref(),
            Some("xiangqi")
        );
        let conversion: RuleSet = "conversion".parse().unwrap();
        let why = choose_variant(Some(&fairy), &conversion).unwrap_err();
        assert!(
            why.contains("capture conversion") && why.contains("janggi"),
            "{why}"
        );
        let why = choose_variant(None, &conversion).unwrap_err();
        assert!(why.contains("no UCI_Variant"), "{why}");
    }

    #[test]
    fn an_engine_without_variants_plays_standard_and_one_without_xiangqi_is_refused() {
        let rules = RuleSet::default();
        assert_eq!(choose_variant(None, &rules).unwrap(), None);
        let why = choose_variant(Some(&offers(&["chess", "shogi"])), &rules).unwrap_err();
        assert!(
            why.contains("offers no xiangqi") && why.contains("shogi"),
            "{why}"
        );
    }
}
