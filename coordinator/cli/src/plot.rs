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
use xq_coordinator::runs::{KindSpec, Section};
use xq_proto::pb;

use xq_web::charts::{self, ImageFormat, Panel};
use xq_web::run_charts::{self, ThetaParam, ThetaPoint};

/// The panels `--plot` draws for `run`; a run with nothing to plot is
/// refused, naming its kind.
pub fn panels(
    run: &pb::RunStatus,
    rows: &[pb::SpsaHistoryRow],
    llr: &[pb::LlrPoint],
) -> anyhow::Result<Vec<Panel>> {
    let kind = match run.spec.as_ref().and_then(|s| s.kind.clone()) {
        Some(k) => Some(KindSpec::try_from(k).context("the run's spec")?),
        None => None,
    };
    let sections = kind.as_ref().map_or(&[][..], |k| k.kind().sections());
    let mut charts = Vec::new();
    for section in sections {
        match (section, kind.as_ref(), &run.sprt) {
            (Section::Theta, Some(kind), _) => {
                let params: Vec<ThetaParam<'_>> =
                    kind.ops().tuned().iter().map(ThetaParam::from).collect();
                let history: Vec<ThetaPoint<'_>> = rows
                    .iter()
                    .map(|r| ThetaPoint {
                        iter: r.iter,
                        theta: &r.theta,
                    })
                    .collect();
                charts.extend(run_charts::spsa(&params, &history));
            }
            (Section::Llr, _, Some(sprt)) => {
                let history: Vec<(u64, f64)> = llr.iter().map(|p| (p.pairs, p.llr)).collect();
                charts.push(run_charts::llr(
                    sprt.lower_bound,
                    sprt.upper_bound,
                    &history,
                ));
            }
            _ => {}
        }
    }
    if charts.is_empty() {
        bail!(
            "run {} is {}: --plot draws SPSA runs (θ) and SPRT runs (LLR)",
            run.run_id,
            match kind.as_ref().map(KindSpec::kind) {
                Some(k)
                    if !sections
                        .iter()
                        .any(|s| matches!(s, Section::Theta | Section::Llr)) =>
                    format!("a {} run", k.as_str()),
                _ => "a run without its SPSA or SPRT status".to_owned(),
            }
        );
    }
    Ok(charts.into_iter().map(|c| c.panel).collect())
}

/// Draws `panels` into `path` (`.svg` or `.png`).
pub fn write(path: &Path, panels: &[Panel]) -> anyhow::Result<()> {
    let format = ImageFormat::from_path(path)?;
    let bytes = charts::panels(panels, format)?;
    xq_proto::atomic_file::write(path, &bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}
