//! What the pages show, as plain serializable values built from stored runs.
//!
//! The summary numbers (W/D/L, Elo and its interval, LOS, LLR and bounds)
//! are taken from the [`Summary`] of the same [`pb::RunStatus`] that
//! `report --json` prints, and a variants run's report is
//! [`variants::report`] of its stored totals, so the page and the CLI cannot
//! disagree. Only what `report` does not print is computed here, with the
//! statistics module's functions: normalized Elo, and the Elo of each
//! recorded point of the history.

use serde::Serialize;
use serde_json::Value;
use xq_proto::pb;

use crate::charts::{self, Bar, ChartError};
use crate::datagen_view::DatagenView;
use crate::run_charts::{self, RunChart, ThetaParam, ThetaPoint};
use xq_coordinator::report::summary::Summary;
use xq_coordinator::report::variants::{self, VariantsReport};
use xq_coordinator::runs::spsa::paste_back;
use xq_coordinator::runs::{RunKind, RunState, RunStatus, Section};
use xq_coordinator::spsa::{SpsaParamSpec, SpsaState};
use xq_coordinator::stats::Results;
use xq_coordinator::stats::elo::{logistic_elo, normalized_elo};
use xq_coordinator::stats::sprt::SprtState;

/// A number with its exact value (for machines) and its shown text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Num {
    pub value: f64,
    pub text: String,
}

fn num(value: f64, decimals: usize) -> Num {
    Num {
        value,
        text: format!("{value:.decimals$}"),
    }
}

pub use xq_coordinator::service::utc;

/// A worker's machine as the workers page shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineView {
    /// The CPU's model name; `—` when unknown.
    pub model: String,
    /// The best ARCH value it runs; `—` when none (an ISA without builds).
    pub arch: String,
    /// `x86-64-v3` on x86-64; empty on another ISA.
    pub level: String,
    /// Its flags, comma-separated.
    pub flags: String,
    pub cores: u32,
    /// `24.1 GiB`, `512 MiB`, or `—` when unknown.
    pub memory: String,
}

impl From<&xq_proto::Machine> for MachineView {
    fn from(m: &xq_proto::Machine) -> MachineView {
        let dash = |s: String| if s.is_empty() { "—".to_owned() } else { s };
        MachineView {
            model: dash(m.cpu_model.clone()),
            arch: m.best_arch().map_or("—", xq_proto::Arch::name).to_owned(),
            level: m
                .x86_level()
                .map(|l| l.name().to_owned())
                .unwrap_or_default(),
            flags: dash(m.flags.to_string()),
            cores: m.cores,
            memory: match m.memory_mib {
                0 => "—".to_owned(),
                mib @ ..1024 => format!("{mib} MiB"),
                mib => format!("{:.1} GiB", mib as f64 / 1024.0),
            },
        }
    }
}

/// One line of the runs list (and the head of a run's page).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    pub id: u64,
    pub name: String,
    pub kind: RunKind,
    pub state: RunState,
    /// The user who created it.
    pub author: Option<String>,
    /// Why an approver rejected it.
    pub rejection: Option<String>,
    /// Higher runs get workers first.
    pub priority: i32,
    /// Among runs of equal priority, pairs in flight in proportion to it
    /// (normal: 100).
    pub share: u32,
    pub games: u64,
    pub target_games: Option<u64>,
    pub in_flight_games: u64,
    /// Counted games in percent of the target.
    pub progress: Option<Num>,
    pub wdl: [u64; 3],
    pub elo: Option<Num>,
    pub elo95: Option<Num>,
    pub los: Option<Num>,
    pub llr: Option<Num>,
    pub lower_bound: Option<Num>,
    pub upper_bound: Option<Num>,
    /// The SPRT's state (`continue`, `accepted_h0`, `accepted_h1`).
    pub sprt_state: Option<String>,
    pub flag: Option<String>,
    pub created: String,
    pub updated: String,
    /// SPSA: iterations done and planned.
    pub iterations: Option<(u64, u64)>,
}

impl RunRow {
    pub fn new(status: &RunStatus) -> Self {
        let s = Summary::of(&pb::RunStatus::from(status.clone()));
        let games = 2 * status.totals.pairs;
        let target_games = status.target_pairs.map(|p| 2 * p);
        let elo = |v: Option<f64>| v.map(|v| num(v, 2));
        let llr = |v: f64| Some(num(v, 3));
        RunRow {
            id: status.id,
            name: status.spec.name.clone(),
            kind: status.spec.kind.kind(),
            state: status.state,
            author: status.author.clone(),
            rejection: status.rejection.clone(),
            priority: status.spec.priority,
            share: status.share,
            games,
            target_games,
            in_flight_games: 2 * status.pairs_in_flight,
            progress: target_games
                .filter(|&t| t > 0)
                .map(|t| num(100.0 * games as f64 / t as f64, 1)),
            wdl: [
                status.totals.wdl.wins,
                status.totals.wdl.draws,
                status.totals.wdl.losses,
            ],
            elo: elo(s.elo),
            elo95: elo(s.elo95),
            los: s.los.map(|v| Num {
                value: v,
                text: format!("{:.1} %", 100.0 * v),
            }),
            llr: s.sprt.and_then(|t| llr(t.llr)),
            lower_bound: s.sprt.and_then(|t| llr(t.lower_bound)),
            upper_bound: s.sprt.and_then(|t| llr(t.upper_bound)),
            sprt_state: s
                .sprt
                .map(|t| t.state.map_or("?", SprtState::as_str).to_owned()),
            flag: status.flag.clone(),
            created: utc(status.created_ms),
            updated: utc(status.updated_ms),
            iterations: status.progress.spsa().map(|sp| (sp.iter, sp.iterations)),
        }
    }
}

/// One row of the spec with a dev and a base value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairRow {
    pub key: String,
    pub dev: String,
    pub base: String,
}

/// The spec: what differs between the players, and everything shared.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct SpecView {
    pub players: Vec<PairRow>,
    pub shared: Vec<(String, String)>,
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "—".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `path = value` rows of a JSON value, depth first.
fn flatten(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                flatten(v, &join(k), out);
            }
        }
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let items: Vec<String> = a.iter().map(scalar).collect();
            out.push((path.to_owned(), items.join(", ")));
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                flatten(v, &join(&i.to_string()), out);
            }
        }
        Value::Object(_) => out.push((path.to_owned(), "—".to_owned())),
        other => out.push((path.to_owned(), scalar(other))),
    }
}

impl SpecView {
    /// The spec's JSON split into the players' sides (`dev_*`/`base_*`
    /// fields and the lineup's `dev`/`base` entries) and the rest.
    pub fn new(status: &RunStatus) -> Self {
        let Ok(spec) = serde_json::to_value(&status.spec) else {
            return SpecView::default();
        };
        let mut view = SpecView::default();
        let mut shared = Vec::new();
        for key in ["name", "priority", "batch_pairs", "workers"] {
            if let Some(v) = spec.get(key) {
                flatten(v, key, &mut shared);
            }
        }
        if let Some(settings) = spec.get("settings") {
            flatten(settings, "", &mut shared);
        }
        if let Some(Value::Object(kind)) = spec.get("kind")
            && let Some((name, Value::Object(inner))) = kind.iter().next()
        {
            let mut inner = inner.clone();
            let mut lineup = match inner.remove("lineup") {
                Some(Value::Object(l)) => l,
                _ => Default::default(),
            };
            let sides = [
                (
                    "parameters",
                    inner.remove("dev_params"),
                    inner.remove("base_params"),
                ),
                ("engine", lineup.remove("dev"), lineup.remove("base")),
                (
                    "limit",
                    lineup.remove("dev_limit"),
                    lineup.remove("base_limit"),
                ),
            ];
            for (label, dev, base) in sides {
                if dev.is_none() && base.is_none() {
                    continue;
                }
                let side = |v: Option<Value>| {
                    let mut rows = Vec::new();
                    flatten(&v.unwrap_or(Value::Null), label, &mut rows);
                    rows
                };
                let (dev, base) = (side(dev), side(base));
                let mut keys: Vec<&String> = dev.iter().chain(&base).map(|(k, _)| k).collect();
                keys.sort();
                keys.dedup();
                let find = |rows: &[(String, String)], k: &str| {
                    rows.iter()
                        .find(|(key, _)| key == k)
                        .map_or_else(|| "—".to_owned(), |(_, v)| v.clone())
                };
                for k in keys {
                    view.players.push(PairRow {
                        key: k.clone(),
                        dev: find(&dev, k),
                        base: find(&base, k),
                    });
                }
            }
            let rest = Value::Object(inner);
            flatten(&rest, name, &mut shared);
            if !lineup.is_empty() {
                flatten(
                    &Value::Object(lineup),
                    &format!("{name}.lineup"),
                    &mut shared,
                );
            }
        }
        view.shared = shared;
        view
    }
}

/// One tuned parameter of an SPSA run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpsaParamView {
    pub name: String,
    pub start: f64,
    pub value: Num,
    pub min: f64,
    pub max: f64,
    pub c_end: f64,
    pub r_end: f64,
    /// `(value − start) / c_end` in percent.
    pub moved: Num,
}

/// The live part of a run's page: totals, statistics and graphs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveView {
    pub row: RunRow,
    pub pentanomial: [u64; 5],
    pub nelo: Option<Num>,
    pub nelo_lower: Option<Num>,
    pub nelo_upper: Option<Num>,
    pub reasons: Vec<(String, u64)>,
    /// Named SVG charts with their point counts per series.
    pub charts: Vec<ChartView>,
    pub spsa: Vec<SpsaParamView>,
    /// `name, int, value, min, max, c_end, r_end` lines.
    pub paste_back: String,
    pub variants: Option<VariantsReport>,
    pub datagen: Option<DatagenView>,
    /// The ETag of this view: changes whenever a number on it can.
    pub etag: String,
}

/// One drawn chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChartView {
    /// `llr`, `elo`, `theta-pct`, `theta-<param>`, `variants`.
    pub id: String,
    pub title: String,
    /// Points per series as drawn (after thinning).
    pub points: Vec<usize>,
    pub svg: String,
}

/// The histories a run's page draws.
pub use xq_coordinator::service::queries::Histories;

/// The ETag of a run's live view.
pub fn etag(status: &RunStatus) -> String {
    format!(
        "\"{}-{}-{}-{}\"",
        status.id,
        status.updated_ms,
        status.pairs_in_flight,
        status.state.as_str()
    )
}

fn chart(c: &RunChart) -> Result<ChartView, ChartError> {
    Ok(ChartView {
        id: c.id.clone(),
        title: c.panel.title.clone(),
        points: c
            .panel
            .chart
            .series
            .iter()
            .map(|s| charts::thin(&s.points).len())
            .collect(),
        svg: c.panel.chart.svg()?,
    })
}

impl LiveView {
    pub fn new(status: &RunStatus, h: &Histories) -> Result<Self, ChartError> {
        let row = RunRow::new(status);
        let penta = Results::Pentanomial(status.totals.pentanomial);
        let nelo = (status.totals.pairs > 0)
            .then(|| normalized_elo(&penta).ok())
            .flatten();
        let mut charts = Vec::new();
        let mut spsa = Vec::new();
        let mut paste_back = String::new();
        let mut variants = None;
        let mut datagen = None;
        for section in status.spec.kind.kind().sections() {
            match section {
                Section::Llr => charts.extend(llr_chart(status, h)?),
                Section::Elo => charts.push(elo_chart(h)?),
                Section::Theta => {
                    let params = status.spec.kind.ops().tuned();
                    if let Some(state) = status.progress.spsa() {
                        (spsa, paste_back) = theta_table(params, state);
                    }
                    charts.extend(theta_charts(params, h)?);
                }
                Section::Variants => {
                    variants = variants::report(status.progress.variants()).ok();
                    if let Some(report) = &variants {
                        charts.push(variant_bars(report)?);
                    }
                }
                Section::Datagen => datagen = DatagenView::new(status),
            }
        }
        let mut reasons: Vec<(String, u64)> = status
            .totals
            .reasons
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(LiveView {
            row,
            pentanomial: status.totals.pentanomial.0,
            nelo: nelo.map(|n| num(n.nelo, 2)),
            nelo_lower: nelo.map(|n| num(n.lower, 2)),
            nelo_upper: nelo.map(|n| num(n.upper, 2)),
            reasons,
            charts,
            spsa,
            paste_back,
            variants,
            datagen,
            etag: etag(status),
        })
    }
}

/// The LLR against its bounds, once the test has a state.
fn llr_chart(status: &RunStatus, h: &Histories) -> Result<Option<ChartView>, ChartError> {
    let Some(sprt) = status.progress.sprt() else {
        return Ok(None);
    };
    let history: Vec<(u64, f64)> = h.llr.iter().map(|p| (p.pairs, p.llr)).collect();
    chart(&run_charts::llr(
        sprt.lower_bound,
        sprt.upper_bound,
        &history,
    ))
    .map(Some)
}

/// Dev's Elo and its interval over the recorded totals.
fn elo_chart(h: &Histories) -> Result<ChartView, ChartError> {
    // Thinned first: the estimate is the costly part of a long history.
    let estimates: Vec<(f64, f64, f64)> = charts::thin(&h.totals)
        .iter()
        .filter_map(|p| {
            let e = logistic_elo(&Results::Pentanomial(p.pentanomial)).ok()?;
            Some((2.0 * p.pairs as f64, e.elo, e.elo95))
        })
        .collect();
    chart(&run_charts::elo(&estimates))
}

/// Each tuned parameter's row, and the paste-back text of θ.
fn theta_table(params: &[SpsaParamSpec], state: &SpsaState) -> (Vec<SpsaParamView>, String) {
    let rows = params
        .iter()
        .zip(&state.params)
        .map(|(p, s)| SpsaParamView {
            name: p.name.clone(),
            start: p.start,
            value: num(s.theta, 2),
            min: p.min,
            max: p.max,
            c_end: p.c_end,
            r_end: p.r_end,
            moved: num(
                if p.c_end != 0.0 {
                    100.0 * (s.theta - p.start) / p.c_end
                } else {
                    0.0
                },
                1,
            ),
        })
        .collect();
    (rows, paste_back(params, &state.theta()))
}

/// θ of each tuned parameter by iteration.
fn theta_charts(params: &[SpsaParamSpec], h: &Histories) -> Result<Vec<ChartView>, ChartError> {
    let params: Vec<ThetaParam<'_>> = params.iter().map(ThetaParam::from).collect();
    let history: Vec<ThetaPoint<'_>> = h
        .spsa
        .iter()
        .map(|r| ThetaPoint {
            iter: r.iter,
            theta: &r.theta,
        })
        .collect();
    run_charts::spsa(&params, &history)
        .iter()
        .map(chart)
        .collect()
}

/// Each variant's results, Red's view, as bars with their intervals.
fn variant_bars(report: &VariantsReport) -> Result<ChartView, ChartError> {
    let bars: Vec<Bar> = report
        .variants
        .iter()
        .flat_map(|v| {
            [
                ("Red win", v.red_win),
                ("draw", v.draw),
                ("Black win", v.black_win),
            ]
            .map(|(name, p)| Bar {
                group: xq_proto::rule_set::name(&v.rules),
                name: name.to_owned(),
                value: p.rate,
                lower: p.lower,
                upper: p.upper,
            })
        })
        .collect();
    Ok(ChartView {
        id: "variants".into(),
        title: "Results per variant, Red's view, with 95 % Wilson intervals".into(),
        points: vec![bars.len()],
        svg: charts::bars(&bars, "share of games")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_names_every_leaf() {
        let v = serde_json::json!({"limit": {"nodes": 1000}, "rules": "standard", "xs": [1, 2],
                                   "e": null, "o": [{"a": 1}]});
        let mut out = Vec::new();
        flatten(&v, "", &mut out);
        let get = |k: &str| {
            out.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("limit.nodes"), Some("1000"));
        assert_eq!(get("rules"), Some("standard"));
        assert_eq!(get("xs"), Some("1, 2"));
        assert_eq!(get("e"), Some("—"));
        assert_eq!(get("o.0.a"), Some("1"));
    }
}
