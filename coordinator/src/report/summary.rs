//! The summary of any run: what `report --json` prints and what the web view
//! shows, as one typed value read from the same [`pb::RunStatus`] (the Elo
//! estimate in it is computed once, in [`crate::convert`]; the kind's own
//! part, the SPRT or θ, was filled in by the kind).

use std::collections::BTreeMap;

use serde::Serialize;
use xq_proto::{Retention, pb};

use crate::runs::wire::sprt_state_of_wire;
use crate::runs::{KindSpec, RunKind, RunState};
use crate::stats::sprt::SprtState;

/// A run's summary. As JSON (see coordinator/CLUSTER.md) its keys are
/// sorted; `null` stands for an estimate not yet made, and the SPRT's and
/// SPSA's keys are present only for runs that have them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub run_id: u64,
    /// `None` for a status without a spec (printed `?`).
    #[serde(serialize_with = "or_unknown")]
    pub kind: Option<RunKind>,
    #[serde(serialize_with = "or_unknown")]
    pub run_state: Option<RunState>,
    /// The user who created the run; `None` for a run without one.
    pub author: Option<String>,
    pub games: u64,
    pub wdl: [u64; 3],
    pub pentanomial: Vec<u64>,
    pub reasons: BTreeMap<String, u64>,
    pub elo: Option<f64>,
    pub elo95: Option<f64>,
    pub los: Option<f64>,
    pub keep_games: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// The SPRT's state for SPRT runs, else the run's state.
    pub state: &'static str,
    #[serde(flatten)]
    pub sprt: Option<SprtSummary>,
    #[serde(flatten)]
    pub spsa: Option<SpsaSummary>,
    #[serde(flatten)]
    pub datagen: Option<DatagenSummary>,
}

/// A datagen run's output so far.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DatagenSummary {
    /// Positions played: every ply of every counted game, openings
    /// included (the export keeps the scored, filtered ones).
    pub positions: u64,
    /// Positions per second over the run's life so far (its creation to its
    /// last counted result); `None` before a result.
    pub positions_per_second: Option<f64>,
}

/// `positions` per second between `created_ms` and `updated_ms` (Unix
/// milliseconds); `None` when no time has passed.
pub fn positions_per_second(positions: u64, created_ms: i64, updated_ms: i64) -> Option<f64> {
    let seconds = (updated_ms - created_ms) as f64 / 1000.0;
    (seconds > 0.0).then(|| positions as f64 / seconds)
}

impl DatagenSummary {
    /// A datagen run's (`None` for another kind).
    pub fn of(s: &pb::RunStatus) -> Option<DatagenSummary> {
        if run_kind(s) != Some(RunKind::Datagen) {
            return None;
        }
        let positions = s.variants.first().map_or(0, |v| v.total_plies);
        Some(DatagenSummary {
            positions,
            positions_per_second: positions_per_second(
                positions,
                s.created_unix_ms,
                s.updated_unix_ms,
            ),
        })
    }
}

/// An SPRT run's test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SprtSummary {
    pub llr: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    #[serde(skip)]
    pub state: Option<SprtState>,
}

/// A tune's progress.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpsaSummary {
    pub iterations: u64,
    pub theta: BTreeMap<String, f64>,
}

fn or_unknown<T: Serialize, S: serde::Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => v.serialize(s),
        None => s.serialize_str("?"),
    }
}

/// The kind of the run (`None` without a spec).
pub fn run_kind(s: &pb::RunStatus) -> Option<RunKind> {
    s.spec
        .as_ref()
        .and_then(|sp| sp.kind.as_ref())
        .map(RunKind::of_wire)
}

/// The run's state (`None` for `UNSPECIFIED`).
pub fn run_state(s: &pb::RunStatus) -> Option<RunState> {
    RunState::of_wire(s.state())
}

/// The run's kind with its spec, from the wire; `None` without a spec (or
/// with one this build cannot read).
pub fn kind_spec(s: &pb::RunStatus) -> Option<KindSpec> {
    let kind = s.spec.as_ref()?.kind.clone()?;
    KindSpec::try_from(kind).ok()
}

/// [`run_kind`]'s name, `?` without a spec.
pub fn kind(s: &pb::RunStatus) -> &'static str {
    run_kind(s).map_or("?", RunKind::as_str)
}

/// [`run_state`]'s name, `?` for `UNSPECIFIED`.
pub fn state(s: &pb::RunStatus) -> &'static str {
    run_state(s).map_or("?", RunState::as_str)
}

/// Which games the run's archive keeps (the default for a spec without
/// it, or an unknown value).
pub fn keep_games(s: &pb::RunStatus) -> Retention {
    s.spec.as_ref().map_or(Retention::All, |sp| {
        Retention::from_wire(sp.keep_games, "spec.keep_games").unwrap_or_default()
    })
}

/// `continue`, `accepted_h0`, `accepted_h1` (`?` for `UNSPECIFIED`).
pub fn sprt_state(s: &pb::SprtStatus) -> &'static str {
    sprt_state_of_wire(s.state()).map_or("?", SprtState::as_str)
}

impl Summary {
    pub fn of(s: &pb::RunStatus) -> Summary {
        let t = s.totals.clone().unwrap_or_default();
        let run_state = run_state(s);
        let sprt = s.sprt.as_ref().map(|sp| SprtSummary {
            llr: sp.llr,
            lower_bound: sp.lower_bound,
            upper_bound: sp.upper_bound,
            state: sprt_state_of_wire(sp.state()),
        });
        Summary {
            run_id: s.run_id,
            kind: run_kind(s),
            run_state,
            author: (!s.author.is_empty()).then(|| s.author.clone()),
            games: 2 * t.pairs,
            wdl: [t.wins, t.draws, t.losses],
            pentanomial: t.pentanomial.clone(),
            reasons: t.reasons.into_iter().collect(),
            elo: s.elo.as_ref().map(|e| e.elo),
            elo95: s.elo.as_ref().map(|e| e.elo95),
            los: s.elo.as_ref().map(|e| e.los),
            keep_games: keep_games(s).token(),
            flag: (!s.flag.is_empty()).then(|| s.flag.clone()),
            state: match (&s.sprt, run_state) {
                (Some(sp), _) => sprt_state(sp),
                (None, Some(r)) => r.as_str(),
                (None, None) => "?",
            },
            sprt,
            spsa: s.spsa.as_ref().map(|sp| SpsaSummary {
                iterations: sp.iter,
                theta: sp.theta.iter().map(|p| (p.name.clone(), p.value)).collect(),
            }),
            datagen: DatagenSummary::of(s),
        }
    }

    /// The summary as a JSON object.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// The result as one JSON object (see coordinator/CLUSTER.md).
pub fn json(s: &pb::RunStatus) -> serde_json::Value {
    Summary::of(s).json()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sprt_summary_has_its_test_and_a_tune_its_theta() {
        let mut s = pb::RunStatus {
            run_id: 7,
            state: pb::RunState::Active.into(),
            sprt: Some(pb::SprtStatus {
                llr: 1.5,
                lower_bound: -2.94,
                upper_bound: 2.94,
                state: pb::SprtState::Continue.into(),
            }),
            ..Default::default()
        };
        let v = json(&s);
        assert_eq!(v["kind"], "?");
        assert_eq!(v["run_state"], "active");
        assert_eq!(v["state"], "continue");
        assert_eq!(v["llr"], 1.5);
        assert_eq!(v["elo"], serde_json::Value::Null);
        assert!(v.get("flag").is_none() && v.get("iterations").is_none());
        s.sprt = None;
        s.spsa = Some(pb::SpsaStatus {
            iter: 3,
            theta: vec![pb::SpsaTheta {
                name: "x".into(),
                value: 2.5,
            }],
            ..Default::default()
        });
        let v = json(&s);
        assert_eq!(v["state"], "active");
        assert_eq!(v["iterations"], 3);
        assert_eq!(v["theta"]["x"], 2.5);
        assert!(v.get("llr").is_none());
        assert!(v.get("positions").is_none());
    }

    #[test]
    fn a_datagen_summary_has_its_positions_and_their_rate() {
        let s = pb::RunStatus {
            run_id: 2,
            spec: Some(pb::RunSpec {
                kind: Some(pb::run_spec::Kind::Datagen(pb::DatagenSpec::default())),
                ..Default::default()
            }),
            created_unix_ms: 10_000,
            updated_unix_ms: 14_000,
            variants: vec![pb::VariantTotals {
                total_plies: 1_000,
                ..Default::default()
            }],
            ..Default::default()
        };
        let v = json(&s);
        assert_eq!(v["kind"], "datagen");
        assert_eq!(v["positions"], 1_000);
        assert_eq!(v["positions_per_second"], 250.0, "1,000 plies in 4 s");
        let fresh = pb::RunStatus {
            updated_unix_ms: 10_000,
            ..s
        };
        assert_eq!(
            json(&fresh)["positions_per_second"],
            serde_json::Value::Null
        );
    }
}
