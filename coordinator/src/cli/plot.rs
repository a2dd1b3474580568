//! `report RUN --plot FILE`: the run's charts (the web view's, from
//! [`run_charts`]) stacked in one SVG or PNG file, chosen by the file's
//! extension.
//!
//! * SPSA: θ − start in % of `c_end` of every parameter (fishtest's relative
//!   view), then one panel per parameter with its absolute θ, against
//!   iterations.
//! * SPRT: the LLR against games with both bounds.

use std::path::Path;

use anyhow::{Context, bail};
use xq_proto::pb;

use xq_coordinator::web::charts::{self, ImageFormat, Panel};
use xq_coordinator::web::run_charts::{self, ThetaParam, ThetaPoint};

/// The panels `--plot` draws for `run`; a run with nothing to plot is
/// refused, naming its kind.
pub fn panels(
    run: &pb::RunStatus,
    rows: &[pb::SpsaHistoryRow],
    llr: &[pb::LlrPoint],
) -> anyhow::Result<Vec<Panel>> {
    let kind = run.spec.as_ref().and_then(|s| s.kind.as_ref());
    let charts = match (kind, &run.sprt) {
        (Some(pb::run_spec::Kind::Spsa(spec)), _) => {
            let params: Vec<ThetaParam<'_>> = spec
                .params
                .iter()
                .map(|p| ThetaParam {
                    name: &p.name,
                    start: p.start,
                    c_end: p.c_end,
                })
                .collect();
            let history: Vec<ThetaPoint<'_>> = rows
                .iter()
                .map(|r| ThetaPoint {
                    iter: r.iter,
                    theta: &r.theta,
                })
                .collect();
            run_charts::spsa(&params, &history)
        }
        (Some(pb::run_spec::Kind::Sprt(_)), Some(sprt)) => {
            let history: Vec<(u64, f64)> = llr.iter().map(|p| (p.pairs, p.llr)).collect();
            vec![run_charts::llr(
                sprt.lower_bound,
                sprt.upper_bound,
                &history,
            )]
        }
        (other, _) => bail!(
            "run {} is {}: --plot draws SPSA runs (θ) and SPRT runs (LLR)",
            run.run_id,
            match other {
                Some(pb::run_spec::Kind::Games(_)) => "a games run",
                Some(pb::run_spec::Kind::Variants(_)) => "a variants run",
                _ => "a run without its SPSA or SPRT status",
            }
        ),
    };
    Ok(charts.into_iter().map(|c| c.panel).collect())
}

/// Draws `panels` into `path` (`.svg` or `.png`).
pub fn write(path: &Path, panels: &[Panel]) -> anyhow::Result<()> {
    let format = ImageFormat::from_path(path)?;
    let bytes = charts::panels(panels, format)?;
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}
