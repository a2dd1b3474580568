//! The summary of any run as one JSON object: what `report --json` prints
//! and what the web view shows, from the same [`pb::RunStatus`] (the Elo
//! estimate in it is computed once, in [`crate::convert`]).

use serde_json::{Value, json};
use xq_proto::{Retention, pb};

/// `sprt`, `spsa`, `games`, `variants` (`?` without a spec).
pub fn kind(s: &pb::RunStatus) -> &'static str {
    match s.spec.as_ref().and_then(|sp| sp.kind.as_ref()) {
        Some(pb::run_spec::Kind::Sprt(_)) => "sprt",
        Some(pb::run_spec::Kind::Spsa(_)) => "spsa",
        Some(pb::run_spec::Kind::Games(_)) => "games",
        Some(pb::run_spec::Kind::Variants(_)) => "variants",
        None => "?",
    }
}

/// `active`, `finished`, `stopped`.
pub fn state(s: &pb::RunStatus) -> &'static str {
    match s.state() {
        pb::RunState::Active => "active",
        pb::RunState::Finished => "finished",
        pb::RunState::Stopped => "stopped",
        pb::RunState::Unspecified => "?",
    }
}

/// Which games the run's archive keeps (the default for a spec without
/// it, or an unknown value).
pub fn keep_games(s: &pb::RunStatus) -> Retention {
    s.spec.as_ref().map_or(Retention::All, |sp| {
        Retention::from_wire(sp.keep_games, "spec.keep_games").unwrap_or_default()
    })
}

/// `continue`, `accepted_h0`, `accepted_h1`.
pub fn sprt_state(s: &pb::SprtStatus) -> &'static str {
    match s.state() {
        pb::SprtState::Continue => "continue",
        pb::SprtState::AcceptedH0 => "accepted_h0",
        pb::SprtState::AcceptedH1 => "accepted_h1",
        pb::SprtState::Unspecified => "?",
    }
}

/// The result as one JSON object (see coordinator/CLUSTER.md).
pub fn json(s: &pb::RunStatus) -> Value {
    let t = s.totals.clone().unwrap_or_default();
    let mut v = json!({
        "run_id": s.run_id,
        "kind": kind(s),
        "run_state": state(s),
        "games": 2 * t.pairs,
        "wdl": [t.wins, t.draws, t.losses],
        "pentanomial": t.pentanomial,
        "reasons": t.reasons.iter().collect::<std::collections::BTreeMap<_, _>>(),
        "elo": s.elo.as_ref().map(|e| e.elo),
        "elo95": s.elo.as_ref().map(|e| e.elo95),
        "los": s.elo.as_ref().map(|e| e.los),
        "keep_games": keep_games(s).token(),
    });
    if !s.flag.is_empty() {
        v["flag"] = json!(s.flag);
    }
    if let Some(sprt) = &s.sprt {
        v["state"] = json!(sprt_state(sprt));
        v["llr"] = json!(sprt.llr);
        v["lower_bound"] = json!(sprt.lower_bound);
        v["upper_bound"] = json!(sprt.upper_bound);
    } else {
        v["state"] = json!(state(s));
    }
    if let Some(spsa) = &s.spsa {
        v["iterations"] = json!(spsa.iter);
        v["theta"] = spsa
            .theta
            .iter()
            .map(|p| (p.name.clone(), json!(p.value)))
            .collect::<serde_json::Map<_, _>>()
            .into();
    }
    v
}
