//! `report` for a variants run: the per-variant report as text, JSON or CSV.

use anyhow::Context;
use serde_json::{Value, json};
use xq_coordinator::report::summary::run_kind;
use xq_coordinator::report::variants::{self, VariantsReport};
use xq_coordinator::runs::{Section, VariantTotals};
use xq_proto::pb;

/// Whether `run`'s kind reports per variant.
pub fn is_variants(run: &pb::RunStatus) -> bool {
    run_kind(run).is_some_and(|k| k.sections().contains(&Section::Variants))
}

/// The run's per-variant totals, or `None` when it is not a variants run.
fn totals(run: &pb::RunStatus) -> anyhow::Result<Option<Vec<VariantTotals>>> {
    if !is_variants(run) {
        return Ok(None);
    }
    let totals = run
        .variants
        .iter()
        .cloned()
        .map(VariantTotals::try_from)
        .collect::<Result<Vec<_>, _>>()
        .context("the coordinator sent bad variant totals")?;
    Ok(Some(totals))
}

fn build(run: &pb::RunStatus) -> anyhow::Result<Option<(VariantsReport, Vec<VariantTotals>)>> {
    let Some(totals) = totals(run)? else {
        return Ok(None);
    };
    let report = variants::report(&totals).context("cannot compute the variants report")?;
    Ok(Some((report, totals)))
}

fn draw_contempt(run: &pb::RunStatus) -> bool {
    run.spec
        .as_ref()
        .and_then(|s| s.settings.as_ref())
        .is_some_and(|s| s.draw_contempt)
}

/// The report as one JSON object: `run_id`, `kind` ("variants"), `run_state`,
/// `draw_contempt`, `variants` (one object per variant with `rules`,
/// `scoring`, `games`, `pairs`, `red_win`, `draw`, `black_win`, `decisive`
/// (each `rate`, `lower`, `upper`), `red_score` (`mean`, `se`, `lower`,
/// `upper`, `design_effect`), `plies` (`mean`, `median`, `histogram`),
/// `reasons`, `conversion`) and `comparisons` (one per variant after the
/// first: `rules`, `reference`, `red_win`, `draw`, `black_win`, `red_score`,
/// `g_test`, `draw_rate_test`, `draw_lower_p`, `design_effect`).
pub fn json(run: &pb::RunStatus, state: &str) -> anyhow::Result<Option<Value>> {
    let Some((report, _)) = build(run)? else {
        return Ok(None);
    };
    Ok(Some(json!({
        "run_id": run.run_id,
        "kind": "variants",
        "run_state": state,
        "draw_contempt": draw_contempt(run),
        "variants": report.variants,
        "comparisons": report.comparisons,
    })))
}

/// The report as text, or `None` when the run is not a variants run.
pub fn text(run: &pb::RunStatus, state: &str) -> anyhow::Result<Option<String>> {
    let Some((report, _)) = build(run)? else {
        return Ok(None);
    };
    Ok(Some(format!(
        "run {} (variants, {state}; draw contempt {})\n{}",
        run.run_id,
        if draw_contempt(run) { "on" } else { "off" },
        variants::text(&report)
    )))
}

/// The report as CSV, or `None` when the run is not a variants run.
pub fn csv(run: &pb::RunStatus) -> anyhow::Result<Option<String>> {
    Ok(build(run)?.map(|(report, totals)| variants::csv(&report, &totals)))
}
